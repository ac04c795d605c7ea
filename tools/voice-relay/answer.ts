// What a voice agent knows and says: the system message grounding the model in the agent's
// instructions and its organization's AI-context articles, the marker by which the model asks to hand
// the caller to a person, the caller's own words that ask for one, and the rules answer given when no
// model is configured or the model fails (the greeting, the best-matching article's title by word
// overlap, or an offer to connect a person).
import type { AiContextArticle } from '../knowledge-base/lookups.ts';
import type { VoiceAgentFacts } from '../voice-agents/lookups.ts';

/** What the model answers, alone, when the caller should talk to a person. */
export const HANDOFF_MARKER = '[[HANDOFF]]';

/** The most article text one system message carries (characters). */
const MAX_ARTICLE_CHARS = 24_000;

/** The system message of a call: who the agent is, its instructions, and the articles it may use. */
export function systemMessage(agent: VoiceAgentFacts, articles: readonly AiContextArticle[]): string {
  const parts = [
    `You are ${agent.name}, a voice agent answering a phone call for this organization. ` +
      `Your words are spoken aloud: answer in ${agent.language}, in one to three short sentences, without lists or markup.`,
    `You opened the call with: "${agent.greeting}"`,
    `Instructions:\n${agent.instructions}`,
    `When the caller asks for a person, or you cannot help, answer exactly ${HANDOFF_MARKER} and nothing else.`,
  ];
  if (articles.length > 0) {
    let budget = MAX_ARTICLE_CHARS;
    const blocks: string[] = [];
    for (const article of articles) {
      if (budget <= 0) break;
      const text = article.text.slice(0, budget);
      budget -= text.length;
      blocks.push(`## ${article.title}\n${text}`);
    }
    parts.push(
      `Knowledge base (answer from these facts only; say so when they do not cover a question):\n${blocks.join('\n\n')}`,
    );
  }
  return parts.join('\n\n');
}

/** The caller's words ask for a person (the rules' side of the handoff). */
export function asksForPerson(prompt: string): boolean {
  return /\b(human|person|operator|representative|someone real|real person|live agent|an agent|a manager|speak to someone|talk to someone)\b/i.test(
    prompt,
  );
}

function wordsOf(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2),
  );
}

/** The article whose title shares the most words with the prompt, or null when none shares one. */
export function bestArticle(prompt: string, articles: readonly AiContextArticle[]): AiContextArticle | null {
  const asked = wordsOf(prompt);
  let best: AiContextArticle | null = null;
  let bestScore = 0;
  for (const article of articles) {
    let score = 0;
    for (const word of wordsOf(`${article.title}`)) if (asked.has(word)) score++;
    if (score > bestScore) {
      best = article;
      bestScore = score;
    }
  }
  return best;
}

/** The rules answer: short and honest about what it is. */
export function rulesAnswer(
  agent: VoiceAgentFacts,
  prompt: string,
  articles: readonly AiContextArticle[],
): string {
  const article = bestArticle(prompt, articles);
  if (article)
    return `${agent.greeting} Our article "${article.title}" covers that; I can also connect you with a person.`;
  return `${agent.greeting} I cannot answer that myself; shall I connect you with a person?`;
}
