import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder, errorObject } from './builder.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import '../companies/graphql.ts';
import '../invoices/graphql.ts';
import '../sandbox/graphql.ts';
import '../webhooks/graphql.ts';

errorObject(ValidationError, 'ValidationError', 'The input is invalid; `details` names each offending field.');
errorObject(NotFoundError, 'NotFoundError', 'The object does not exist (or is not visible to the caller).');
errorObject(ConflictError, 'ConflictError', 'The object is in a state that does not allow this operation.');

export const schema = builder.toSchema();

export const printedSchema = (): string => printSchema(lexicographicSortSchema(schema));
