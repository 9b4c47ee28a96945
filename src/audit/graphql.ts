// GraphQL auditLog: the same entries as REST, as a cursor connection (docs/security.md, "Audit log").
import { AUDIT_ACTIONS } from '../core/audit.ts';
import { builder } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { specEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, registerNodeType } from '../graphql/node-ids.ts';
import { auditOrder, auditWhere, CREDENTIAL_KINDS } from './service.ts';

registerNodeType('AuditEntry', nodeIdFormats.uuid);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const AuditActionEnum = specEnum('AuditAction', AUDIT_ACTIONS, 'What an audit entry records (docs/security.md).');
const CredentialKindEnum = specEnum('CredentialKind', CREDENTIAL_KINDS, 'What authenticated a change.');

const AuditEntryType = builder.prismaNode('AuditEntry', {
  description: 'One security- or money-relevant change; entries are never changed or deleted.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'settings:read') }),
  nullable: true,
  fields: (t) => ({
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it happened.' }),
    action: t.field({ type: AuditActionEnum, description: 'What happened.', resolve: (e) => e.action as (typeof AUDIT_ACTIONS)[number] }),
    credential: t.field({ type: CredentialKindEnum, description: 'What authenticated it.', resolve: (e) => e.credential as (typeof CREDENTIAL_KINDS)[number] }),
    apiKeyId: t.exposeString('keyId', { nullable: true, description: 'The API key that made it (its id, as in REST); null for the public token and the operator.' }),
    apiKeyName: t.exposeString('keyName', { nullable: true, description: 'That key’s name when it made the change.' }),
    clientAddress: t.exposeString('clientAddress', { nullable: true, description: 'The client address; null for the operator.' }),
    details: t.string({ description: 'What changed, as JSON text (its fields depend on the action).', resolve: (e) => JSON.stringify(e.details) }),
  }),
});

builder.queryField('auditLog', (t) =>
  t.prismaConnection(
    {
      type: AuditEntryType,
      cursor: 'id',
      authScopes: { scope: 'settings:read' },
      description: 'The audit log of the calling mode, newest first (REST GET /api/company/audit-log).',
      ...PAGE_SIZES,
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.auditEntry.findMany({ ...query, where: auditWhere(ctx.company!.id), orderBy: auditOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.auditEntry.count({ where: auditWhere(ctx.company!.id) });
      },
    },
    connectionNames('AuditEntry', 'audit entries'),
    edgeNames('AuditEntry'),
  ),
);
