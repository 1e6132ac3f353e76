// Loaded by mocha before any test file (see .mocharc.json).
import { setLogLevel } from '../lib/logger';
import { quietRuntime } from './helpers/temporal';

quietRuntime();
// in-process apps and workers log warnings and faults only; services the tests spawn keep LOG_LEVEL (info)
if (!process.env.LOG_LEVEL) setLogLevel('warn');
