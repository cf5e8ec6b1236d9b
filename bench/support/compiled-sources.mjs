// `node --import <this file>`: runs the TypeScript sources of a checkout compiled as the production
// build compiles them (esbuild, ES2022, no kept names): every bench (`npm run bench`) and the
// processes benches start with sources in them (the gateway's front, the in-service timings), so
// code measured in process is the code `npm start` runs. tsx, which the tests use, always compiles
// with esbuild's keepNames: every function made at run time is named by a call of its own
// (`__name`, an Object.defineProperty), about 1 µs of a request through the gateway (2-3 %), which
// the built server (`npm start`, dist/) does not pay. tsx cannot turn it off, hence these two files.
import { register } from 'node:module';

register('./compiled-sources-hooks.mjs', import.meta.url);
