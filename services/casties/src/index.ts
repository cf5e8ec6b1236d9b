export { buildCastiesApp } from './app.ts';
export type { CastiesDeps } from './app.ts';
export { castiesModule, castiesProjections, startCastiesReadModels } from './module.ts';
export { castieDecider, castieStreamId, isEnded, type CastieCommand, type CastieState, type ScoredForecast } from './casties/decider.ts';
export { randomId48 } from './casties/routes.ts';
export { forecastDecider, forecastStreamId, type ForecastState, type PlaceForecast } from './forecasting/decider.ts';
export { commentDecider, commentStreamId, type CommentCommand, type CommentState } from './comments/decider.ts';
export { CASTIE_VIEWS, type CastieView } from './casties/read-model.ts';
export { FORECASTS, forecastDocId, forecastsOfCastie, type ForecastDoc } from './forecasting/read-model.ts';
