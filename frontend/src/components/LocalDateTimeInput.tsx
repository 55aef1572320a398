import { TextInput, type TextInputProps } from '@mantine/core';
import { useEffect, useState } from 'react';
import { parseLocalDateTime, showLocalDateTime } from '../lib/time';

type Props = Omit<TextInputProps, 'value' | 'onChange' | 'type'> & {
  /** A local date-time value ("2026-03-29T14:05:00", the viewer's zone) or ''. */
  value: string;
  /** Called with a valid value or '' (emptied); never with a half-typed one. */
  onChange: (value: string) => void;
};

const FORMAT_ERROR = 'YYYY-MM-DD HH:MM:SS, 24-hour';

/**
 * A date and time typed as the console shows them: "2026-03-29 14:05:00", 24-hour, with seconds.
 * Not `<input type="datetime-local">`: Chromium draws that in the browser's locale, "03/29/2026,
 * 02:05 PM" in en-US, beside tables that say 14:05:00 (review 2026-12-05 §5.14).
 */
export function LocalDateTimeInput({ value, onChange, error, placeholder, ...props }: Props) {
  const [text, setText] = useState(() => showLocalDateTime(value));
  const [invalid, setInvalid] = useState(false);
  // A value set from outside (a filter read from the URL, a dialog's default) replaces the text,
  // unless it is what the text already says.
  useEffect(() => {
    setText((current) => (parseLocalDateTime(current) === value ? current : showLocalDateTime(value)));
    setInvalid(false);
  }, [value]);
  return (
    <TextInput
      {...props}
      inputMode="numeric"
      autoComplete="off"
      spellCheck={false}
      placeholder={placeholder ?? 'YYYY-MM-DD HH:MM:SS'}
      value={text}
      error={error ?? (invalid ? FORMAT_ERROR : undefined)}
      onChange={(e) => {
        const typed = e.currentTarget.value;
        setText(typed);
        const parsed = parseLocalDateTime(typed);
        // Half-typed text is only marked once the field is left (onBlur), not at every keystroke.
        if (parsed !== null) {
          setInvalid(false);
          if (parsed !== value) onChange(parsed);
        }
      }}
      onBlur={(e) => {
        const parsed = parseLocalDateTime(text);
        setInvalid(parsed === null);
        if (parsed !== null && parsed !== '') setText(showLocalDateTime(parsed));
        props.onBlur?.(e);
      }}
    />
  );
}
