export { readEmbeddedConfig, type EmbeddedConfig } from './config.ts';
export { startEmbedded, type EmbeddedSystem, type EmbeddedOptions } from './embedded.ts';
