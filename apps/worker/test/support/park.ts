import type { SimScriptRequest } from '@baton/model-sim';

/**
 * Parks the first request that follows the agent's first flip of a feature to passing (its
 * checkpoint has been pushed by then: memory writes wait for the workspace changes before them).
 */
export function parkAfterFirstFlip() {
  let parked = false;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let onParked: () => void = () => undefined;
  const parkedSignal = new Promise<void>((resolve) => {
    onParked = resolve;
  });
  /** The first message of every session, as JSON. */
  const firstPrompts: string[] = [];
  const script = async (request: SimScriptRequest) => {
    const [opening] = request.params.messages;
    if (request.params.messages.length === 1 && opening !== undefined) {
      firstPrompts.push(JSON.stringify(opening.content));
    }
    if (parked) return undefined;
    const last = [...request.params.messages].reverse().find((item) => item.role === 'assistant');
    const flipped =
      Array.isArray(last?.content) &&
      last.content.some((block) => {
        if (block.type !== 'tool_use' || block.name !== 'memory') return false;
        const input = block.input as { command?: string; path?: string; new_str?: string };
        return (
          input.command === 'str_replace' &&
          input.path === '/memories/features.json' &&
          /true\s*$/.test(input.new_str ?? '')
        );
      });
    if (!flipped) return undefined;
    parked = true;
    onParked();
    await gate;
    return undefined;
  };
  return {
    script: (request: SimScriptRequest) => script(request),
    parked: parkedSignal,
    release,
    firstPrompts,
  };
}
