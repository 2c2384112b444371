import path from 'node:path';
import ts from 'typescript';

/**
 * Type-checks service-inputs.typecheck.ts and error-codes.typecheck.ts: every `@ts-expect-error` there must meet an error (an
 * unused one is itself an error), and nothing else may fail.
 */
it('tsc refuses misspelled fields passed to service methods and error codes outside the table, and accepts the right ones', () => {
  const configFile = ts.readConfigFile(path.join(__dirname, '../../tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, path.join(__dirname, '../..'));
  const program = ts.createProgram([path.join(__dirname, 'service-inputs.typecheck.ts'), path.join(__dirname, 'error-codes.typecheck.ts')], {
    ...options,
    noEmit: true,
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(diagnostics).toEqual([]);
});
