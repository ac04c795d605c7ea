// Locks in what a voice agent knows and says by rule (tools/voice-relay/answer.ts): the system
// message's parts and its article budget, the caller's words that ask for a person, and the rules
// answer's choice of article by title word overlap.
import { describe, expect, it } from 'vitest';
import type { AiContextArticle } from '../../tools/knowledge-base/lookups.ts';
import type { VoiceAgentFacts } from '../../tools/voice-agents/lookups.ts';
import {
  asksForPerson,
  bestArticle,
  HANDOFF_MARKER,
  rulesAnswer,
  systemMessage,
} from '../../tools/voice-relay/answer.ts';

const agent: VoiceAgentFacts = {
  id: 'a'.repeat(24),
  name: 'Front desk',
  instructions: 'Only talk about Acme.',
  greeting: 'Hello from Acme.',
  voice: 'Polly.Joanna',
  language: 'en-US',
  useKnowledgeBase: true,
  status: 'active',
};

const article = (title: string, text = 'Body.'): AiContextArticle => ({
  id: title,
  title,
  locale: 'en',
  text,
});

describe('the voice agent’s answers by rule', () => {
  it('puts the instructions, greeting, marker and articles in the system message, within a budget', () => {
    const message = systemMessage(agent, [article('Opening hours', 'Nine to five.')]);
    for (const part of ['Front desk', 'en-US', 'Only talk about Acme.', 'Hello from Acme.', HANDOFF_MARKER])
      expect(message).toContain(part);
    expect(message).toContain('## Opening hours\nNine to five.');
    expect(systemMessage(agent, [])).not.toContain('Knowledge base');
    const huge = systemMessage(agent, [article('One', 'x'.repeat(30_000)), article('Two', 'y')]);
    expect(huge.length).toBeLessThan(26_000);
    expect(huge).not.toContain('## Two');
  });

  it('hears a request for a person, and not an ordinary question', () => {
    for (const words of ['Can I talk to a human?', 'Put me through to an operator', 'a real person please'])
      expect(asksForPerson(words), words).toBe(true);
    for (const words of ['When do you open?', 'What is your refund policy?'])
      expect(asksForPerson(words), words).toBe(false);
  });

  it('picks the article whose title shares the most words, or offers a person', () => {
    const articles = [
      article('Opening hours'),
      article('Refund policy for online orders'),
      article('Refunds'),
    ];
    expect(bestArticle('What is the refund policy for orders?', articles)?.title).toBe(
      'Refund policy for online orders',
    );
    expect(bestArticle('Is it raining?', articles)).toBeNull();
    expect(rulesAnswer(agent, 'opening hours today?', articles)).toBe(
      'Hello from Acme. Our article "Opening hours" covers that; I can also connect you with a person.',
    );
    expect(rulesAnswer(agent, 'Is it raining?', articles)).toBe(
      'Hello from Acme. I cannot answer that myself; shall I connect you with a person?',
    );
  });
});
