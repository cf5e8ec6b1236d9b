export { buildGatewayApp, type GatewayDeps } from './app.ts';
export { bodyText, httpClient, inProcessClient, type ServiceClient, type ServiceResponse } from './routing/service-client.ts';
export { countsId, defaultLiveLimits, LiveStreams, type LiveLimits, type StreamSink } from './live/live-streams.ts';
