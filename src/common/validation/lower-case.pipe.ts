import { PipeTransform } from '@nestjs/common';

/**
 * A path id as stored: ids are matched lower-case, so `/v1/orgs/ABC…` and `/v1/orgs/abc…` name one thing
 * (in fingerprints and audit entries too). Anything not a string passes untouched.
 */
export class LowerCasePipe implements PipeTransform {
  transform(value: unknown): unknown {
    return typeof value === 'string' ? value.toLowerCase() : value;
  }
}
