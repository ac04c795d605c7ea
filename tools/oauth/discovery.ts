// Discovery for OAuth clients: the protected resources' metadata (RFC 9728) for /mcp (at the
// path-aware `/.well-known/oauth-protected-resource/mcp` and at the root, which MCP clients try
// when the path-aware one is missing) and for /api/v1, and the authorization server's metadata
// (RFC 8414). The base is PUBLIC_BASE_URL, the issuer every `iss` carries.
import type { PublicRoute } from '../../core/area.ts';
import type { TokenResource } from '../../core/auth-context.ts';
import type { Services } from '../../core/services.ts';
import type { OauthCatalogue } from './authorize.ts';
import { resourceUrl } from './grants.ts';

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'public, max-age=300',
      // Browser-based MCP clients read the metadata cross-origin; it is public and carries no credential.
      'access-control-allow-origin': '*',
    },
  });
}

function protectedResource(services: Services, resource: TokenResource, catalogue: OauthCatalogue): Response {
  const base = services.config.publicBaseUrl;
  return json({
    resource: resourceUrl(base, resource),
    authorization_servers: [base],
    scopes_supported: resource === 'mcp' ? ['mcp:read', 'mcp:write'] : [...catalogue.knownScopes],
    bearer_methods_supported: ['header'],
    resource_name: resource === 'mcp' ? 'CRM MCP server' : 'CRM REST API',
    resource_documentation: `${base}/docs`,
  });
}

function authorizationServer(services: Services, catalogue: OauthCatalogue): Response {
  const base = services.config.publicBaseUrl;
  const authMethods = ['none', 'client_secret_basic', 'client_secret_post'];
  return json({
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    scopes_supported: [...catalogue.knownScopes],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  });
}

export function discoveryRoutes(catalogue: OauthCatalogue): PublicRoute[] {
  return [
    {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource',
      handle: async (_request, services) => protectedResource(services, 'mcp', catalogue),
    },
    {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource/mcp',
      handle: async (_request, services) => protectedResource(services, 'mcp', catalogue),
    },
    {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource/api/v1',
      handle: async (_request, services) => protectedResource(services, 'api', catalogue),
    },
    {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      handle: async (_request, services) => authorizationServer(services, catalogue),
    },
  ];
}
