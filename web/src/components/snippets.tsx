// Copyable code blocks: the start-up code shown when an SDK key is created
// (screens/admin/snippets.ts writes it) and the first steps of an empty flag list.
import { useId } from "react";
import type { Snippet } from "../screens/admin/snippets";
import { CopyButton } from "./ui";

// Snippets shows code blocks, each with its own copy button.
export function Snippets({ snippets }: { snippets: Snippet[] }) {
  return (
    <div className="snippets">
      {snippets.map((sn) => (
        <SnippetBlock key={sn.id} snippet={sn} />
      ))}
    </div>
  );
}

function SnippetBlock({ snippet }: { snippet: Snippet }) {
  const id = useId();
  return (
    <figure className="snippet" aria-labelledby={id}>
      <figcaption className="snippet-head">
        <span id={id}>{snippet.title}</span>
        <CopyButton className="btn-small" label={`Copy ${snippet.title}`} text={snippet.code} />
      </figcaption>
      <pre data-testid={`snippet-${snippet.id}`}>
        <code className={`language-${snippet.language}`}>{snippet.code}</code>
      </pre>
    </figure>
  );
}
