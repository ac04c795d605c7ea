import { type Route, route } from '../../core/route.ts';
import type { Tool } from '../../core/tool.ts';

/** The route table; get_me is built by the area (it reads the plan table). */
export function meRoutes(built: { getMe: Tool }): Route[] {
  return [route('GET', '/me', built.getMe)];
}
