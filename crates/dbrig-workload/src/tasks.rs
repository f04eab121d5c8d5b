//! Waiting for a group of spawned tasks (parallel loaders, index builders): every task is
//! awaited, so no connection is left mid-statement, and the first error is the one reported.

use tokio::task::JoinHandle;

use crate::error::WorkloadError;

/// The results of all `handles` in order, or the first error among them; `what` names the
/// tasks in the message of one that panicked.
pub(crate) async fn join_tasks<T>(
    handles: Vec<JoinHandle<Result<T, WorkloadError>>>,
    what: &str,
) -> Result<Vec<T>, WorkloadError> {
    let mut out = Vec::with_capacity(handles.len());
    let mut first_error = None;
    for h in handles {
        match h.await {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(join) => {
                first_error.get_or_insert(WorkloadError::Internal(format!(
                    "{what} task failed: {join}"
                )));
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn all_are_awaited_and_the_first_error_wins() {
        let ok: Vec<JoinHandle<Result<u32, WorkloadError>>> =
            (0..3).map(|i| tokio::spawn(async move { Ok(i) })).collect();
        assert_eq!(join_tasks(ok, "t").await.unwrap(), vec![0, 1, 2]);
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = std::sync::Arc::clone(&done);
        let mixed: Vec<JoinHandle<Result<u32, WorkloadError>>> = vec![
            tokio::spawn(async { Err(WorkloadError::Internal("first".into())) }),
            tokio::spawn(async { Err(WorkloadError::Internal("second".into())) }),
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                d.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(1)
            }),
        ];
        let e = join_tasks(mixed, "t").await.unwrap_err();
        assert!(e.to_string().contains("first"), "{e}");
        assert!(
            done.load(std::sync::atomic::Ordering::SeqCst),
            "the slow task was awaited"
        );
        let panicked: Vec<JoinHandle<Result<u32, WorkloadError>>> =
            vec![tokio::spawn(async { panic!("boom") })];
        let e = join_tasks(panicked, "loader").await.unwrap_err();
        assert!(e.to_string().contains("loader task failed"), "{e}");
    }
}
