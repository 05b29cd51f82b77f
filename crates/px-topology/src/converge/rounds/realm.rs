//! The realm's steps of the apply graph: the realm before the tenant's pod (a pod
//! `realm::pod` needs its realm), the access policy after the realm (its rule names
//! the realm), the realm user after the policy, and the token after the user.

use super::super::ops::Op;
use super::super::realm_ops::RealmOp;
use super::{Builder, by};
use crate::plan::{Action, Kind, Payload};

impl Builder<'_> {
    /// Round 1: create or recover the realm.
    pub(super) fn realm(&mut self) {
        for (i, c) in self.changes.iter().enumerate() {
            let (Kind::Realm, Payload::Realm { name }) = (c.kind, &c.payload) else {
                continue;
            };
            let op = match c.action {
                Action::Create => RealmOp::Create { name: name.clone() },
                Action::Recover => RealmOp::Recover { name: name.clone() },
                _ => continue,
            };
            let n = self.g.add(Op::Realm(op), [], [i]);
            self.realm_ready.push(n);
        }
    }

    /// After the realm: the access policy, then the realm user holding it.
    pub(super) fn realm_user(&mut self) {
        let mut policies = Vec::new();
        for (i, c) in by(self.changes, Kind::AccessPolicy, Action::Create) {
            if let Payload::AccessPolicy {
                name,
                realm,
                role,
                aggregation_strategy,
            } = &c.payload
            {
                let op = RealmOp::CreatePolicy {
                    name: name.clone(),
                    realm: realm.clone(),
                    role: role.clone(),
                    aggregation_strategy: aggregation_strategy.clone(),
                };
                policies.push(self.g.add(Op::Realm(op), self.realm_ready.clone(), [i]));
            }
        }
        for (i, c) in by(self.changes, Kind::RealmUser, Action::Create) {
            if let Payload::RealmUser { admin, policy } = &c.payload {
                let op = RealmOp::CreateUser {
                    admin: admin.clone(),
                    policy: policy.clone(),
                };
                let n = self.g.add(Op::Realm(op), policies.clone(), [i]);
                self.user_ready.push(n);
            }
        }
    }
}
