import { NextFunction, Request, RequestHandler, Response } from 'express';
import { composeMiddleware } from './compose';

const req = {} as Request;
const res = {} as Response;

describe('composeMiddleware', () => {
  it('runs the handlers in order, then the outer next', () => {
    const seen: string[] = [];
    const record =
      (name: string): RequestHandler =>
      (_req, _res, next) => {
        seen.push(name);
        next();
      };
    const next = jest.fn() as NextFunction;
    composeMiddleware(record('a'), record('b'), record('c'))(req, res, next);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(next).toHaveBeenCalledWith();
  });

  it('hands an error to the outer next and runs nothing after it', () => {
    const failure = new Error('refused');
    const after = jest.fn();
    const next = jest.fn() as NextFunction;
    composeMiddleware((_req, _res, step) => step(failure), after)(
      req,
      res,
      next,
    );
    expect(next).toHaveBeenCalledWith(failure);
    expect(after).not.toHaveBeenCalled();
  });

  it('stops when a handler answers without calling next', () => {
    const after = jest.fn();
    const next = jest.fn() as NextFunction;
    composeMiddleware(() => undefined, after)(req, res, next);
    expect(after).not.toHaveBeenCalled();
    expect(next).not.toHaveBeenCalled();
  });

  it('continues later when a handler calls next asynchronously (inside its own context)', async () => {
    const next = jest.fn() as NextFunction;
    const after = jest.fn((_req, _res, step: NextFunction) => step());
    composeMiddleware((_req, _res, step) => {
      setImmediate(() => step());
    }, after)(req, res, next);
    expect(after).not.toHaveBeenCalled();
    await new Promise((done) => setImmediate(done));
    expect(after).toHaveBeenCalled();
    expect(next).toHaveBeenCalledWith();
  });
});
