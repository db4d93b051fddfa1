// A Server-Sent Events reader (WHATWG HTML, "Interpreting an event stream"): only `data` fields
// matter here; `event`, `id`, `retry` and comment lines are read past.

export interface SseParser {
  push(text: string): void;
}

export function createSseParser(onData: (data: string) => void): SseParser {
  let pending = '';
  let dataLines: string[] = [];

  const line = (text: string): void => {
    if (text === '') {
      // A blank line dispatches the event; one without data lines dispatches nothing.
      if (dataLines.length > 0) onData(dataLines.join('\n'));
      dataLines = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') dataLines.push(value);
  };

  return {
    push(text: string): void {
      let buffer = pending + text;
      // A chunk may end between the CR and LF of one line break: hold the CR back for the next one.
      const heldCr = buffer.endsWith('\r');
      if (heldCr) buffer = buffer.slice(0, -1);
      const lines = buffer.split(/\r\n|\r|\n/);
      pending = (lines.pop() ?? '') + (heldCr ? '\r' : '');
      for (const complete of lines) line(complete);
    },
  };
}
