// The variables every handler of the HTTP app can read: the request id, and the caller once
// authenticated.
import type { AuthContext } from '../core/auth-context.ts';

export interface AppEnv {
  Variables: { requestId: string; auth: AuthContext };
}
