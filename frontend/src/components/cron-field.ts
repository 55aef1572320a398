import type { ComponentType } from 'react';

/**
 * The slot through which the app hands the cron builder to the schedule form: features never import
 * each other, so the form only knows this shape and the app wires the real component in.
 */
export interface CronFieldProps {
  expression: string;
  timezone: string;
  onChange: (next: { expression: string; timezone: string }) => void;
  error?: string | null;
}

export type CronFieldComponent = ComponentType<CronFieldProps>;
