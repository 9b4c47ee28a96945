// Limits every GraphQL operation meets before any resolver runs, for anonymous callers too. GraphQL Armor's
// rules are linear in the document (each fragment is measured once, however often it is spread), unlike the
// hand-made depth rule they replace, whose cost doubled with every nested fragment.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, type ExecutionResult, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const GRAPHQL_LIMITS = {
  /**
   * Tokens per document. graphql-js parses recursively and overflows its stack near 2,000 nested list or object
   * values; 1,000 tokens stops any document before that. Send large inputs (500 invoice items) as variables.
   */
  maxTokens: 1_000,
  /**
   * Field depth of application queries: every real query of this schema (connections included) fits.
   * Introspection is bounded by graphql-js's own MaxIntrospectionDepthRule (and the token limit).
   */
  maxDepth: 10,
  /** Aliased fields per operation (`__typename` free). */
  maxAliases: 15,
  maxDirectives: 10,
  /**
   * Armor's cost: objects 2, scalars 1, x1.5 per level, x`first` of literal page sizes. The costliest real
   * query (100 invoices with items, transactions and refunds) is well below this; 200 aliased pages are not.
   */
  maxCost: 50_000,
} as const;

/** Rejections become validation errors with a code, reported like graphql-js's own (not thrown). */
const report =
  (code: string) =>
  (context: ValidationContext | null, error: GraphQLError): void => {
    const message = error.message.replace(/^Syntax Error: /, '');
    context?.reportError(new GraphQLError(message, { extensions: { code } }));
  };

const rejected = (code: string) => ({ propagateOnRejection: false, onReject: [report(code)] });

// graphql-js suggests names in validation and in variable coercion errors ("Did you mean \"invoice\"?", "Did you
// mean the enum value \"DONE\"?"); Armor's suggestion blocker sees only the first kind and only some phrasings.
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

/** Takes graphql-js's "Did you mean ...?" out of error messages (in place). */
export function stripSuggestions<E extends { message: string }>(errors: readonly E[] | undefined): void {
  for (const error of errors ?? []) error.message = error.message.replace(SUGGESTION, '');
}

/** With introspection off, no error message may reveal a field, argument, type or enum value by suggesting it. */
const hideSuggestions: Plugin = {
  onResultProcess({ result }) {
    for (const r of (Array.isArray(result) ? result : [result]) as ExecutionResult[]) stripSuggestions(r.errors);
  },
};

export function graphqlLimits(options: { introspection: boolean }): Plugin[] {
  return [
    ...(options.introspection ? [] : [hideSuggestions]),
    EnvelopArmorPlugin({
      blockFieldSuggestion: { enabled: false },
      // The parser stops at the limit (it throws: there is no document to validate yet).
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
      // flattenFragments: a spread is not a level of its own, so a client's fragments (codegen documents) cost
      // what the same fields inline cost.
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...rejected('QUERY_TOO_DEEP') },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases, ...rejected('TOO_MANY_ALIASES') },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...rejected('TOO_MANY_DIRECTIVES') },
      costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, flattenFragments: true, ...rejected('QUERY_TOO_COSTLY') },
    }) as Plugin,
  ];
}
