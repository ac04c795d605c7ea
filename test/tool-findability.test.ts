// Locks in that shortened tool descriptions still lead to the right tool: for a fixed set of tasks,
// a keyword scorer (BM25 over name and description) ranks the expected tool in the top 3 at least
// as often as it did with the long descriptions.
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../tools/index.ts';
import { hitsOf, rankTools, TOOL_TASKS } from './fixtures/tool-tasks.ts';

/** Tasks whose tool ranked in the top 3 with the descriptions before they were shortened (bench/results.md). */
const HITS_BEFORE = 36;

describe('tool descriptions', () => {
  it('name a real tool in every task', () => {
    const names = new Set(TOOLS.map((tool) => tool.name));
    expect(TOOL_TASKS.length).toBeGreaterThanOrEqual(40);
    for (const task of TOOL_TASKS) expect(names.has(task.tool), task.tool).toBe(true);
  });

  it(`rank the expected tool in the top 3 for at least ${HITS_BEFORE} of the tasks`, () => {
    const { hits, misses } = hitsOf(TOOLS);
    const report = misses.map(
      (miss) => `${miss.task.task} -> ${miss.task.tool} (got ${miss.ranked.join(', ')})`,
    );
    expect(hits.length, report.join('\n')).toBeGreaterThanOrEqual(HITS_BEFORE);
  });

  it('rank by the words of the task, not by registry order', () => {
    const tools = [
      { name: 'list_leads', description: 'Lists the leads of the organization, with filters.' },
      { name: 'send_invoice', description: 'Sends an invoice to the customer by email.' },
    ];
    expect(rankTools('email the invoice to the customer', tools)[0]).toBe('send_invoice');
    expect(rankTools('show me my leads', tools)[0]).toBe('list_leads');
  });
});
