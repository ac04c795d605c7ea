// What the surveys area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each, its token scope family `content` (shared with the knowledge base:
// read:content / write:content), its MCP toolset, the plan feature its tools need with the lowest
// plan that has it, and the payload of the event it emits (events.ts). tools/index.ts collects
// every area's declaration; the declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { surveysEvents } from './events.ts';

export const surveysCatalogue = {
  permissions: {
    'surveys.view': 'read',
    'surveys.create': 'write',
    'surveys.edit': 'write',
    'surveys.delete': 'write',
  },
  // What the family covers, in the words the OAuth consent page shows a person ("See …").
  scopes: { content: 'knowledge-base articles and surveys' },
  toolsets: {
    surveys:
      'Surveys (plan feature surveys): build NPS, rating, choice and text questions, activate a public form, read the responses and their summary.',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { surveys: 'pro' },
  events: surveysEvents,
} as const satisfies AreaCatalogue;

type SurveysPermissions = (typeof surveysCatalogue)['permissions'];

type SurveysScopes = (typeof surveysCatalogue)['scopes'];

type SurveysToolsets = (typeof surveysCatalogue)['toolsets'];

type SurveysFeatures = (typeof surveysCatalogue)['features'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends SurveysToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends SurveysScopes {}
  interface PermissionCatalog extends SurveysPermissions {}
  interface FeatureCatalog extends SurveysFeatures {}
}
