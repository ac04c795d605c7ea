// The OAuth area's operator settings (core/settings.ts): read only here, checked at start-up.
import { booleanSetting, defineSettings } from '../../core/settings.ts';

export const oauthSettings = defineSettings({
  OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: booleanSetting(false).describe(
    'When false, an OAuth Client ID Metadata Document (a client_id that is a URL) is fetched only over https ' +
      'from public addresses (SSRF guard); true allows http and loopback/private hosts, for local development and tests.',
  ),
});
