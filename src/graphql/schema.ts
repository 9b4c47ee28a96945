import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';

let built: GraphQLSchema | null = null;

/** The schema of every GraphQL type registered so far: build it after the features' modules are imported. */
export function graphqlSchema(): GraphQLSchema {
  built ??= builder.toSchema();
  return built;
}

export const printedSchema = (): string => printSchema(lexicographicSortSchema(graphqlSchema()));
