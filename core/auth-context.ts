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
  /** MCP toolsets stored on the API key or chosen at OAuth consent (empty: none chosen); null or absent for sessions and operator tokens. */
  toolsets?: readonly string[] | null;
  /**
   * The resource an OAuth token was issued for (RFC 8707): 'mcp' or 'api'; null or absent for
   * other tokens and for operator-minted OAuth tokens, which are accepted on both.
   */
  resource?: TokenResource | null;
}

/** The two protected resources of the server: `/mcp` and `/api/v1`. */
export type TokenResource = 'mcp' | 'api';
