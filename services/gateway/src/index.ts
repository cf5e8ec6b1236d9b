export { buildGatewayApp, type GatewayDeps } from './app.ts';
export { httpClient, inProcessClient, type ServiceClient } from './routing/service-client.ts';
export { countsId, defaultLiveLimits, LiveStreams, type LiveLimits, type StreamSink } from './live/live-streams.ts';
