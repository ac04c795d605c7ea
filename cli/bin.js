#!/usr/bin/env node
// The installed `crm` executable: registers tsx so Node can load the TypeScript sources, then
// hands over to cli/main.ts, which parses the arguments and sets the exit code.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
