import { GraphQLError, Kind, type ASTNode, type FragmentDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql';

/** Rejects operations nested deeper than `maxDepth` fields (fragments followed), before execution. */
export function depthLimit(maxDepth: number): ValidationRule {
  return (context: ValidationContext) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    const depthOf = (node: ASTNode, depth: number, seen: Set<string>): number => {
      if (node.kind === Kind.FIELD) {
        if (!node.selectionSet) return depth;
        return Math.max(depth, ...node.selectionSet.selections.map((s) => depthOf(s, depth + 1, seen)));
      }
      if (node.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(node.name.value);
        if (!fragment || seen.has(node.name.value)) return depth;
        return depthOf(fragment, depth, new Set(seen).add(node.name.value));
      }
      if (node.kind === Kind.INLINE_FRAGMENT || node.kind === Kind.FRAGMENT_DEFINITION || node.kind === Kind.OPERATION_DEFINITION) {
        return Math.max(depth, ...node.selectionSet.selections.map((s) => depthOf(s, depth, seen)));
      }
      return depth;
    };
    return {
      OperationDefinition(operation) {
        const depth = depthOf(operation, 0, new Set());
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(`Query depth ${depth} exceeds the limit of ${maxDepth}`, { nodes: [operation], extensions: { code: 'QUERY_TOO_DEEP' } }));
        }
      },
    };
  };
}
