// Loaded by mocha before any test file (see .mocharc.json).
import { quietRuntime } from './helpers/temporal';

quietRuntime();
