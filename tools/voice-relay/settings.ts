// The voice relay's operator setting (core/settings.ts): read only here, checked at start-up.
import { z } from 'zod';
import { defineSettings } from '../../core/settings.ts';

export const voiceRelaySettings = defineSettings({
  VOICE_RELAY_MAX_TURNS: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .optional()
    .transform((v) => (v === undefined ? 30 : Number(v)))
    .refine((n) => n >= 1 && n <= 500, 'must be between 1 and 500')
    .describe(
      'How many caller prompts a voice agent answers in one call before it hands the caller to a person (1-500, default 30).',
    ),
});
