// Locks in the collection of background work from the declarations (core/jobs.ts, tools/index.ts): every job the runtime ran before is declared by exactly one area or the kernel, every schedule names a declared job, a job declared twice (two areas) fails at collection, and a schedule of an undeclared job fails too. A new area's jobs join without an edit here: the lists below are what must not go missing, not all there is.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineArea } from '../../core/area.ts';
import { checkSchedules, defineJob, defineSchedule, registerJobs } from '../../core/jobs.ts';
import { AREAS, JOBS, RELAYS, SCHEDULES, SWEEPS } from '../../tools/index.ts';

const payload = z.object({}).describe('No options');

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    'registry.sample': z.output<typeof payload>;
  }
}

const sample = () => defineJob({ name: 'registry.sample', payload, async handler() {} });

describe('the job registry', () => {
  it('holds every job the runtime ran before, each declared once', () => {
    expect([...JOBS.keys()]).toEqual(
      expect.arrayContaining([
        'email.send',
        'estimates.expire',
        'forecast.snapshot',
        'idempotency.expire',
        'invoices.overdue',
        'live-counts.fold',
        'mail.scrub',
        'mail.send',
        'proposals.expire',
        'trash.purge',
        'webhook.deliver',
        'workflow.step',
      ]),
    );
  });

  it('has a declared job behind every schedule, and the schedules the runtime ran before', () => {
    for (const schedule of SCHEDULES) expect(JOBS.has(schedule.job), schedule.job).toBe(true);
    expect(SCHEDULES.map((s) => s.job)).toEqual(
      expect.arrayContaining([
        'estimates.expire',
        'forecast.snapshot',
        'idempotency.expire',
        'invoices.overdue',
        'live-counts.fold',
        'mail.scrub',
        'proposals.expire',
        'trash.purge',
      ]),
    );
  });

  it('sweeps the mail outbox, scheduled email and its follow-ups, workflow steps and webhook deliveries; relays the outbox', () => {
    // What must not go missing; a new area's sweep joins without an edit here.
    expect(SWEEPS.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'email follow-ups',
        'outgoing mail',
        'scheduled email',
        'webhook deliveries',
        'workflow steps',
      ]),
    );
    expect(new Set(SWEEPS.map((s) => s.name)).size).toBe(SWEEPS.length);
    expect(RELAYS.map((r) => r.name)).toEqual(['outbox relay']);
  });

  it('keeps each area’s jobs in its own folder: the job names start with a name the area owns', () => {
    const owners = new Map<string, string>();
    for (const area of AREAS) for (const job of area.jobs ?? []) owners.set(job.name, area.name);
    for (const [job, area] of owners) {
      // `webhook.deliver` in webhooks, `workflow.step` in workflows, `password_reset.process` in
      // password-reset: the area's name or its singular, in snake case.
      const name = area.replace(/-/g, '_');
      expect([name, name.replace(/s$/, '')], job).toContain(job.split('.')[0]);
    }
    expect(Object.fromEntries(owners)).toMatchObject({
      'invoices.overdue': 'invoices',
      'proposals.expire': 'proposals',
      'trash.purge': 'trash',
      'webhook.deliver': 'webhooks',
      'forecast.snapshot': 'forecast',
      'estimates.expire': 'estimates',
      'email.send': 'email',
      'workflow.step': 'workflows',
    });
  });

  it('refuses a job declared by two areas', () => {
    const area = (name: string) =>
      defineArea({
        name,
        tools: [],
        routes: [],
        tags: {},
        permissions: [],
        events: [],
        toolsets: [],
        jobs: [sample()],
      });
    const areas = [area('one'), area('two')];
    expect(() => registerJobs(areas.flatMap((a) => a.jobs ?? []))).toThrow(
      /Job registry\.sample is defined twice/,
    );
  });

  it('refuses a schedule of a job nobody declares', () => {
    const schedule = defineSchedule({
      job: 'registry.sample',
      payload: () => ({}),
      repeat: () => ({ everyMs: 1000 }),
    });
    expect(() => checkSchedules(registerJobs([]), [schedule])).toThrow(/registry\.sample/);
    expect(() => checkSchedules(registerJobs([sample()]), [schedule])).not.toThrow();
  });
});
