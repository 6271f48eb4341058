// Runs the @nestjs/swagger CLI plugin inside ts-jest (same options as nest-cli.json), so the OpenAPI
// document under test is the one `nest build` produces. Bump `version` when the options change.
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS module loaded by ts-jest */
const plugin = require('@nestjs/swagger/plugin');
const options = require('../../nest-cli.json').compilerOptions.plugins.find(
  (p) => p.name === '@nestjs/swagger',
).options;

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 1;
module.exports.factory = (compilerInstance) =>
  plugin.before(options, compilerInstance.program);
