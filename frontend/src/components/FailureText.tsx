import { Code, Text } from '@mantine/core';

/** The first non-empty line of an error: what the operator reads first ("HandlerFailed: disk full"). */
export function errorHeadline(error: string): string {
  return error.split('\n').find((line) => line.trim() !== '')?.trim() ?? error;
}

/** An error as a one-line headline, with the rest (the traceback) collapsed and wrapped.
 * `headlineOnly`: the same text is already shown in full elsewhere on the page. */
export function FailureText({ error, headlineOnly = false }: { error: string; headlineOnly?: boolean }) {
  const headline = errorHeadline(error);
  const rest = error.slice(error.indexOf(headline) + headline.length).replace(/^\s*\n/, '');
  return (
    <div>
      <Text size="sm" fw={600} className="cp-traceback cp-error-headline">
        {headline}
      </Text>
      {!headlineOnly && rest.trim() !== '' && (
        <details>
          <summary>
            <Text span size="sm">
              Traceback
            </Text>
          </summary>
          <Code block className="cp-traceback" mt={4}>
            {rest}
          </Code>
        </details>
      )}
    </div>
  );
}
