// Call routes: read only (the provider's hooks write calls).
import { type Route, route } from '../../core/route.ts';
import { getCall, listCalls } from './tools.ts';

export const callRoutes: Route[] = [route('GET', '/calls', listCalls), route('GET', '/calls/:id', getCall)];
