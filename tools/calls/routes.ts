// Call routes: read (the provider's hooks write calls), and call monitoring.
import { type Route, route } from '../../core/route.ts';
import { getCall, listCalls, startCallMonitor, stopCallMonitor } from './tools.ts';

export const callRoutes: Route[] = [
  route('GET', '/calls', listCalls),
  route('GET', '/calls/:id', getCall),
  route('POST', '/call-monitor/start', startCallMonitor, { status: 200 }),
  route('POST', '/call-monitor/stop', stopCallMonitor, { status: 200 }),
];
