// autocannon setupRequest, loaded by its worker (workers mode takes a module path, not a function).
// Hands out `paths` (carried on the request object) once each, shared by all connections of the worker, so every
// request fills a different invoice. Past the end it asks for a path that does not exist (a visible failure).
let next = 0;
module.exports = (req) => ({ ...req, path: req.paths[next++] ?? '/api/none' });
