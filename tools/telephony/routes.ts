// Telephony routes: the organization's provider settings, one resource per organization.
import { type Route, route } from '../../core/route.ts';
import { deleteTelephonySettings, getTelephonySettings, updateTelephonySettings } from './tools.ts';

export const telephonyRoutes: Route[] = [
  route('GET', '/settings/telephony', getTelephonySettings),
  route('PUT', '/settings/telephony', updateTelephonySettings),
  route('DELETE', '/settings/telephony', deleteTelephonySettings),
];
