import { type Route, route } from '../../core/route.ts';
import { getMe } from './tools.ts';

export const meRoutes: Route[] = [route('GET', '/me', getMe)];
