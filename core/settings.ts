// Operator settings an area declares for itself: environment variables only that area reads (the
// OAuth area's OAUTH_CLIENT_METADATA_ALLOW_PRIVATE; telephony's provider base URL). The kernel's own
// variables stay in core/config.ts; an area's live beside its code, in its `catalogue.ts`
// `settings`, so a new area adds a variable without an edit here or in the kernel's schema.
//
// Every process that serves or works checks the declared settings against its environment when it
// starts (`checkSettings`, called with the catalogue's list by the REST app and the worker runtime),
// so a typo in a deployment fails at start-up with the variable's name, as the kernel's do; an
// area reads its values with `settings.of(config)`, parsed once per configuration.
import { z } from 'zod';

/** A true/false variable: `true|false|1|0|yes|no`, absent is `fallback`. */
export function booleanSetting(fallback: boolean) {
  return z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));
}

/** The environment a configuration was loaded from (core/config.ts `Config.env`). */
export interface SettingsSource {
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What one variable is for, in one sentence (the README's configuration table says the same). */
export interface SettingVariable {
  name: string;
  description: string;
}

/** One area's settings: the variables it declares and the typed reader of their values. */
export interface AreaSettings<T> {
  readonly variables: readonly SettingVariable[];
  /** The values in this configuration's environment, parsed once; throws like `loadConfig` when invalid. */
  of(config: SettingsSource): T;
}

type SettingShape = Record<string, z.ZodType>;

/**
 * Declares an area's variables, each a zod schema over the raw string (or undefined) with a
 * `.describe()` sentence. Names are UPPER_SNAKE_CASE; the catalogue refuses one declared twice or
 * shadowing a kernel variable (core/catalogue.ts).
 */
export function defineSettings<S extends SettingShape>(shape: S): AreaSettings<z.infer<z.ZodObject<S>>> {
  const schema = z.object(shape);
  const variables = Object.entries(shape).map(([name, variable]) => {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`Setting ${name} is not an UPPER_SNAKE_CASE name`);
    if (!variable.description) throw new Error(`Setting ${name} has no description`);
    return { name, description: variable.description };
  });
  const parsed = new WeakMap<object, z.infer<typeof schema>>();
  return {
    variables,
    of(config) {
      const known = parsed.get(config.env);
      if (known !== undefined) return known;
      const result = schema.safeParse(config.env);
      if (!result.success) {
        const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
        throw new Error(`Invalid configuration: ${problems}`);
      }
      parsed.set(config.env, result.data);
      return result.data;
    },
  };
}

/** Parses every declared setting once, so an invalid value stops the process that starts. */
export function checkSettings(config: SettingsSource, settings: readonly AreaSettings<unknown>[]): void {
  for (const declared of settings) declared.of(config);
}
