// The authorization server of mcpfast's auth tests: oidc-provider (a certified OpenID Connect
// implementation) on loopback, configured from the environment the test gives it:
//   PORT             the port to listen on (127.0.0.1)
//   KEYS_FILE        a JSON file {"keys": [private JWKs]}: the signing keys (the first signs)
//   JWT_RESOURCE     the resource whose access tokens are JWTs (RFC 9068)
//   OPAQUE_RESOURCE  the resource whose access tokens are opaque (checked by introspection)
//   CLIENTS_FILE     a JSON file: the client metadata list
//   OTHER_RESOURCE   another JWT resource (its tokens are for someone else: wrong audience)
//   TOKEN_TTL        seconds an access token lives (default 300)
//   TTL_BY_CLIENT    JSON {client_id: seconds}: shorter lives for some clients
// Prints "listening <issuer>" on stdout once it serves.
import { readFileSync } from 'node:fs';
import Provider, { errors } from 'oidc-provider';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const jwtResource = process.env.JWT_RESOURCE;
const opaqueResource = process.env.OPAQUE_RESOURCE;
const otherResource = process.env.OTHER_RESOURCE;
const defaultTtl = Number(process.env.TOKEN_TTL || 300);
const ttlByClient = JSON.parse(process.env.TTL_BY_CLIENT || '{}');
const scopes = 'mcp:tools files:read files:write';

const provider = new Provider(issuer, {
  clients: JSON.parse(readFileSync(process.env.CLIENTS_FILE, 'utf8')),
  jwks: JSON.parse(readFileSync(process.env.KEYS_FILE, 'utf8')),
  scopes: scopes.split(' '),
  clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => jwtResource,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resourceIndicator, client) {
        const ttl = ttlByClient[client.clientId] ?? defaultTtl;
        if (resourceIndicator === jwtResource || resourceIndicator === otherResource) {
          return { scope: scopes, audience: resourceIndicator, accessTokenTTL: ttl, accessTokenFormat: 'jwt',
                   jwt: { sign: { alg: 'RS256' } } };
        }
        if (resourceIndicator === opaqueResource) {
          return { scope: scopes, audience: opaqueResource, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
        }
        throw new errors.InvalidTarget();
      },
    },
  },
});
provider.proxy = false;

const server = provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
