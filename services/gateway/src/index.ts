export { buildGatewayApp, type GatewayDeps } from './app.ts';
export { httpClient, inProcessClient, type ServiceClient } from './routing/service-client.ts';
