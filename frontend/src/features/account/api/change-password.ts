import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import type { PasswordChange } from '../../../api/types';

/** This login carries on: the answer sets new session cookies, and every other login has ended. */
export const useChangePassword = () =>
  useMutation({
    meta: { success: 'Password changed; your other sessions are signed out' },
    mutationFn: (body: PasswordChange) => unwrap(api.POST('/api/v1/auth/password', { body })),
  });
