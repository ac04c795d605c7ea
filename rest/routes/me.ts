import { getMe } from '../../tools/me.ts';
import { type Route, route } from '../route.ts';

export const meRoutes: Route[] = [route('GET', '/me', getMe)];
