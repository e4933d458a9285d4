/**
 * A W3C EventSource parser over a fetch body: yields `{event, data}` for each event (`event:` and
 * `data:` lines, a blank line ends an event; `data` lines are joined with "\n"; comments ignored).
 */

/** One server-sent event. `event` defaults to "message". */
export interface SseEvent {
  event: string;
  data: string;
}

/** Parses `body` as it arrives; ends when the stream ends. */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  const reader = body.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline = buffer.search(/\r\n|\r|\n/);
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { event, data: data.join("\n") };
          event = "message";
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
      if (done) break;
    }
  } finally {
    reader.releaseLock();
  }
}
