// Locks in the settings areas declare for themselves (core/settings.ts): parsed from the environment a
// configuration was loaded from, refused at start-up when invalid (building the app, starting workers),
// never declared twice or over a kernel variable, and each one documented in the README with the kernel's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../core/catalogue.ts';
import { KERNEL_VARIABLES, loadConfig } from '../core/config.ts';
import { booleanSetting, checkSettings, defineSettings } from '../core/settings.ts';
import { createApp } from '../http/app.ts';
import { CATALOGUE } from '../tools/index.ts';
import { oauthSettings } from '../tools/oauth/settings.ts';
import { createTestContext } from './fixtures/index.ts';

describe('area settings', () => {
  it('reads a declared variable from the configuration, with its default when absent', () => {
    expect(oauthSettings.of(loadConfig({})).OAUTH_CLIENT_METADATA_ALLOW_PRIVATE).toBe(false);
    const config = loadConfig({ OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'yes' });
    expect(oauthSettings.of(config).OAUTH_CLIENT_METADATA_ALLOW_PRIVATE).toBe(true);
    // Parsed once per configuration: the same object each time.
    expect(oauthSettings.of(config)).toBe(oauthSettings.of(config));
  });

  it('refuses an invalid value when the server is built, naming the variable', async () => {
    const t = await createTestContext();
    try {
      const config = loadConfig({
        ...t.services.config.env,
        OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'sometimes',
      });
      expect(() => checkSettings(config, CATALOGUE.settings)).toThrow(
        /Invalid configuration: OAUTH_CLIENT_METADATA_ALLOW_PRIVATE/,
      );
      expect(() => createApp({ ...t.services, config })).toThrow(/OAUTH_CLIENT_METADATA_ALLOW_PRIVATE/);
    } finally {
      await t.close();
    }
  });

  it('refuses a variable declared by two areas or over a kernel variable', () => {
    const declaring = (name: string, variable: string) => ({
      name,
      brings: { settings: defineSettings({ [variable]: booleanSetting(false).describe('A switch') }) },
    });
    expect(() => buildCatalogue([declaring('one', 'ONE_SWITCH'), declaring('two', 'ONE_SWITCH')])).toThrow(
      /Setting ONE_SWITCH is declared by both one and two/,
    );
    expect(() => buildCatalogue([declaring('one', 'PORT')])).toThrow(/declared by both the kernel and one/);
    expect(() => defineSettings({ lower_case: booleanSetting(false).describe('A switch') })).toThrow(
      /UPPER_SNAKE_CASE/,
    );
    expect(() => defineSettings({ NO_WORDS: booleanSetting(false) })).toThrow(/no description/);
  });

  it('has every kernel variable and every declared setting in the README configuration table', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## A worked example'));
    const declared = CATALOGUE.settings.flatMap((s) => s.variables.map((v) => v.name));
    expect(declared).toContain('OAUTH_CLIENT_METADATA_ALLOW_PRIVATE');
    // A row names its variables in its first cell (`S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY` share one).
    const named = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]));
    for (const name of [...KERNEL_VARIABLES, ...declared]) expect(named, name).toContain(name);
  });
});
