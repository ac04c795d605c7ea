// What every document area declares the same way beside its own tools and routes: its tools are in
// the `billing` toolset, its status machine is registered (core/state-machine.ts: the registry the
// OpenAPI document and the tests read), and its one daily job runs on its schedule.
import type { DailyJob } from '../../core/jobs.ts';
import type { StateMachine } from '../../core/state-machine.ts';

export function documentAreaParts(machine: StateMachine, daily: DailyJob) {
  return {
    toolsets: ['billing'] as const,
    stateMachines: [machine],
    jobs: [daily.job],
    schedules: [daily.schedule],
  };
}
