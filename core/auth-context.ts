// What authentication establishes about a caller; every tool handler receives it.
import type { Role } from './access.ts';

export type TokenKind = 'session' | 'pat' | 'oauth';

export interface AuthContext {
  tokenKind: TokenKind;
  orgId: string;
  userId: string;
  role: Role;
  plan: string;
  disabledFeatures: readonly string[];
  /** Scopes of a PAT or OAuth token; null for session JWTs, which are not scope-limited. */
  scopes: readonly string[] | null;
  /** The API key or OAuth token id, for per-key limits and `last_used_at`. */
  credentialId: string | null;
  /** MCP toolsets stored on the API key (empty: none chosen); null or absent for sessions and OAuth. */
  toolsets?: readonly string[] | null;
}
