import { Alert, Button, Group, List, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/QueryState';
import { RequireRole } from '../../components/RequireRole';
import { AuditTrail, ChainStatus } from './AuditPage';
import { useVerifyAudit } from './api/verify-audit';

/**
 * The installation's pages (contract v3, two scopes): only an instance ADMIN opens them; the
 * navigation shows them under "Installation", and the API refuses everyone else anyway.
 * They reuse the audit trail and its chain verdict.
 */

/** Every sign-in, sign-out and refused sign-in of the installation (`auth.*`, project null). */
export function SignInsPage() {
  return (
    <RequireRole operation="verifyAudit" title="Sign-ins">
      <AuditTrail title="Sign-ins" action="auth." chain={false} />
    </RequireRole>
  );
}

function Figure({ label, value }: { label: string; value: number | string | null }) {
  return (
    <Paper withBorder p="sm">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value ?? '—'}
      </Text>
    </Paper>
  );
}

function AuditChain() {
  const verify = useVerifyAudit(true);
  const result = verify.data;
  return (
    <Stack>
      <PageHeader title="Audit chain">
        <ChainStatus />
        <Button variant="default" onClick={() => verify.refetch()} loading={verify.isFetching}>
          Verify again
        </Button>
      </PageHeader>
      <Text size="sm" c="dimmed" maw={720}>
        Every change is an audit event linked to the one before it by hash and sealed with the audit key; signed
        checkpoints of the head are also kept outside the database. Verification walks the whole trail and names the
        first event that was changed, lost its seal or follows a deleted one.
      </Text>
      <QueryState isPending={verify.isPending} error={verify.error} onRetry={() => verify.refetch()} isEmpty={false}>
        {result && (
          <Stack>
            <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }}>
              <Figure label="Events checked" value={result.checked} />
              <Figure label="Newest event" value={result.head_id} />
              <Figure label="Sealed through" value={result.sealed_id} />
              <Figure label="Not sealed yet" value={result.unsealed} />
              <Figure label="Anchored at" value={result.anchor_id} />
              <Figure label="Forged checkpoints" value={result.bad_checkpoints} />
            </SimpleGrid>
            {result.reasons.length > 0 && (
              <Alert color={result.ok ? 'blue' : 'red'} title={result.ok ? 'Notes' : 'Why it does not verify'}>
                <List size="sm">
                  {result.reasons.map((reason) => (
                    <List.Item key={reason}>{reason}</List.Item>
                  ))}
                </List>
              </Alert>
            )}
            <Group>
              <Text size="sm">
                From the command line: <code>cronplane audit verify</code>.
              </Text>
            </Group>
          </Stack>
        )}
      </QueryState>
    </Stack>
  );
}

export function AuditChainPage() {
  return (
    <RequireRole operation="verifyAudit" title="Audit chain">
      <AuditChain />
    </RequireRole>
  );
}
