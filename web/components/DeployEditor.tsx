'use client';
/**
 * The APL source in CodeMirror 6: YAML highlighting, line numbers, and the deploy's errors as lint
 * markers at their lines (gutter marker + underline, the message on hover and in the list below the
 * editor). Built from the CM6 packages directly (view, state, language, lang-yaml, lint); the pinned
 * `codemirror` 6.65.7 package is the CodeMirror 5 line and is not used.
 */
import { yaml } from '@codemirror/lang-yaml';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { useEffect, useRef } from 'react';

/** Colours from the page's theme variables, so YAML reads at 4.5:1 in the light and the dark theme. */
const aplHighlight = HighlightStyle.define([
  { tag: [t.definition(t.propertyName), t.propertyName], color: 'var(--accent-dark)', fontWeight: '600' },
  { tag: [t.string, t.special(t.string), t.content], color: 'var(--text)' },
  { tag: [t.number, t.bool, t.null, t.atom], color: 'var(--ok)' },
  { tag: [t.keyword, t.meta, t.labelName, t.typeName], color: 'var(--warn)' },
  { tag: [t.comment, t.lineComment], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [t.punctuation, t.separator, t.squareBracket, t.brace], color: 'var(--muted)' },
]);

export interface LineError {
  line: number | null;
  column?: number | null;
  code: string;
  message: string;
}

/** Diagnostics for the errors that name a line of this document (others stay in the list only). */
export function diagnosticsFor(state: EditorState, errors: readonly LineError[]): Diagnostic[] {
  return errors.flatMap((e) => {
    if (e.line == null || e.line < 1 || e.line > state.doc.lines) return [];
    const line = state.doc.line(e.line);
    const indent = line.text.length - line.text.trimStart().length;
    return [{ from: line.from + indent, to: Math.max(line.to, line.from + indent), severity: 'error', message: `${e.code}: ${e.message}`, source: 'deploy' }];
  });
}

export function DeployEditor({
  value,
  onChange,
  errors,
  checked,
  label,
}: {
  value: string;
  onChange(v: string): void;
  /** the deploy's errors, for the source that was checked */
  errors: readonly LineError[];
  checked: string | null;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const change = useRef(onChange);
  change.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: '',
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          drawSelection(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          yaml(),
          syntaxHighlighting(aplHighlight),
          lintGutter(),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true', spellcheck: 'false' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) change.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
  }, [label]);

  // an outside value (a reset) replaces the document; typing does not come back through here
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  // markers only while the document is the one that was checked: after an edit the lines may have moved
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const same = checked !== null && v.state.doc.toString() === checked;
    v.dispatch(setDiagnostics(v.state, same ? diagnosticsFor(v.state, errors) : []));
  }, [errors, checked, value]);

  return <div ref={host} className="editor" data-testid="apl-editor" />;
}
