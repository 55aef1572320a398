import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client';
import { projectsQueryKey } from '../../../api/queries/list-projects';
import type { Quotas, Role } from '../../../api/types';
import { membersQueryKey } from './list-members';

/** createProject, updateProject, deleteProject (instance ADMIN). */
export const useCreateProject = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { slug: string; name: string; quotas?: Quotas }) => unwrap(api.POST('/api/v1/projects', { body })),
    onSettled: () => qc.invalidateQueries({ queryKey: projectsQueryKey }),
  });
};

export const useUpdateProject = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ slug, body }: { slug: string; body: { name?: string; quotas?: Quotas; archived?: boolean } }) =>
      unwrap(api.PATCH('/api/v1/projects/{slug}', { params: { path: { slug } }, body })),
    onSettled: () => qc.invalidateQueries({ queryKey: projectsQueryKey }),
  });
};

export const useDeleteProject = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (slug: string) => unwrap(api.DELETE('/api/v1/projects/{slug}', { params: { path: { slug } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: projectsQueryKey }),
  });
};

/** setProjectMember, removeProjectMember (the project's ADMINs, or an instance ADMIN). */
export const useSetMember = (slug: string) => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, role }: { userId: number; role: Role }) =>
      unwrap(api.PUT('/api/v1/projects/{slug}/members/{user_id}', { params: { path: { slug, user_id: userId } }, body: { role } })),
    onSettled: () => qc.invalidateQueries({ queryKey: membersQueryKey(slug) }),
  });
};

export const useRemoveMember = (slug: string) => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (userId: number) => unwrap(api.DELETE('/api/v1/projects/{slug}/members/{user_id}', { params: { path: { slug, user_id: userId } } })),
    onSettled: () => qc.invalidateQueries({ queryKey: membersQueryKey(slug) }),
  });
};
