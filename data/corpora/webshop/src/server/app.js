'use strict';

const express = require('express');
const config = require('./config');
const logger = require('./logger');
const orders = require('./orders');
const { UserService } = require('./users');

const app = express();
const users = new UserService();

app.use(express.json());

// Never log req.body here: it carries the 'password' field in clear text.
app.post('/api/login', async (req, res) => {
  const ok = await users.verifyLogin(req.body.email, req.body.password);
  res.status(ok ? 200 : 401).json({ ok });
});

app.get('/api/orders', async (req, res) => {
  const list = await orders.listOrders(req.query.user);
  res.json(list);
});

app.get('/api/orders/:id', async (req, res) => {
  try {
    const order = await orders.getOrder(req.params.id);
    if (!order) {
      res.status(404).end();
      return;
    }
    res.json(order);
  } catch (e) {}
});

app.delete('/api/orders/:id', (req, res) => {
  orders.cancelOrder(req.params.id, (err) => {
    res.status(err ? 500 : 204).end();
  });
});

app.listen(config.port, () => {
  logger.info(`server listening on 0.0.0.0:${config.port} (pid ${process.pid})`);
  // 'ready' on stdout (the console.log below) is what the deploy health check waits for.
  console.log('ready');
});
