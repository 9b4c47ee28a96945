// Conventions every list follows: `<Type>Connection`/`<Type>Edge` names, one page-size limit, checked cursors.
import { ValidationError } from '../errors/app-error.ts';

export const MAX_PAGE_SIZE = 100;
export const PAGE_SIZES = { defaultSize: 20, maxSize: MAX_PAGE_SIZE } as const;

interface TotalCountFieldBuilder {
  int(options: { nullable: false; description: string; extensions: Record<string, unknown>; resolve: (parent: { totalCount?: unknown }) => unknown }): unknown;
}

/**
 * Name and description of a connection type. Its `totalCount` is the prisma plugin's own field (same extension, so
 * the plugin still counts only when it is selected), declared again only to give it a description.
 */
export const connectionNames = (type: string, what: string) => ({
  name: `${type}Connection`,
  description: `A page of ${what}.`,
  // Typed loosely: the field builder's parent type differs per connection and the field does not depend on it.
  fields: ((t: TotalCountFieldBuilder) => ({
    totalCount: t.int({
      nullable: false,
      description: `How many ${what} match, over all pages.`,
      extensions: { pothosPrismaTotalCount: true },
      // A root connection carries a counting function; a related one (t.relatedConnection) the count itself.
      resolve: (parent) => (typeof parent.totalCount === 'function' ? (parent.totalCount as () => unknown)() : parent.totalCount),
    }),
  })) as never,
});

export const edgeNames = (type: string) => ({ name: `${type}Edge`, description: `One ${type} with its cursor.` });

interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/**
 * Refuses oversized pages with a typed error (Pothos would clamp them silently) and forged cursors: a cursor is
 * opaque to clients but not to forgers, so what it decodes to must look like an id of the listed type.
 */
export function checkPage(args: PageArgs, query: unknown, idPattern: RegExp): void {
  if ((args.first ?? 0) > MAX_PAGE_SIZE || (args.last ?? 0) > MAX_PAGE_SIZE) {
    throw new ValidationError([{ path: args.first ? 'first' : 'last', message: `must be at most ${MAX_PAGE_SIZE}` }]);
  }
  const cursorId = (query as { cursor?: { id?: unknown } }).cursor?.id;
  if (cursorId !== undefined && !(typeof cursorId === 'string' && idPattern.test(cursorId))) {
    throw new ValidationError([{ path: args.after ? 'after' : 'before', message: 'must be a cursor from a previous page' }]);
  }
}
