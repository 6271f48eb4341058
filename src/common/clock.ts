import { Global, Injectable, Module } from '@nestjs/common';

/** The time as services see it; tests move it (jest.spyOn(app.get(Clock), 'now')) to check expiries. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
